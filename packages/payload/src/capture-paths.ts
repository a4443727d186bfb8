/**
 * Every path SDKs send events to; each also answers with a trailing slash. The capture service
 * routes them and both nginx configs send them to capture: a unit test checks the configs.
 */
export const CAPTURE_PATHS = ['/capture', '/batch', '/e', '/i/v0/e', '/track', '/engage', '/s'] as const;
