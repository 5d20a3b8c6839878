/** What a handler returns; the route table writes it to the wire. */
export interface Reply {
  status: number;
  body?: unknown;
}

export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown): Reply => ({ status: 201, body });
export const noContent = (): Reply => ({ status: 204 });
