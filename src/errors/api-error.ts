import { catalogue, type ErrorCode } from './catalogue';

/** One item of an error body's `errors` array: a field problem, or a plain string. */
export type ErrorDetail = { field: string; message: string; suggestion?: string } | string;

/**
 * The only error that crosses the API boundary. The code fixes the HTTP status
 * (see the catalogue); the message defaults to the catalogue's meaning.
 */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly errors: ErrorDetail[] = [],
  ) {
    super(message ?? catalogue[code].message);
    this.status = catalogue[code].status;
  }

  toBody() {
    return { error: { code: this.code, message: this.message, errors: this.errors } };
  }
}

export const notFound = (what = 'The requested resource could not be found.') =>
  new ApiError('NOT_FOUND', what);
