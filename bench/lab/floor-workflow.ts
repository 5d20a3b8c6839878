import { proxySinks, type Sinks } from '@temporalio/workflow';

export interface FloorSinks extends Sinks {
  floor: { finished(): void };
}

const { floor } = proxySinks<FloorSinks>();

/** Does nothing: one workflow task, then complete. The per-workflow floor of the server. */
export async function floorNoop(): Promise<void> {
  floor.finished();
}
