/** A filter a backend cannot compile; readers answer it with a 400, as they do a validation problem. */
export class PropertyFilterError extends Error {
  override name = 'PropertyFilterError';
}
