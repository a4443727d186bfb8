export { decodeBody, type DecodeResult, type DecodeErrorKind, type RawRequest } from './decode-body.js';
export { BATCH_ENVELOPE_SCHEMA, CAPTURE_EVENT_SCHEMA, parseCaptureRequest, type ParseResult, type NormalisedEvent, type DroppedEvent, type ParseOptions } from './parse-capture-request.js';
export { extractDistinctId, MAX_DISTINCT_ID_LENGTH } from './distinct-id.js';
export { checkToken } from './token.js';
export { CAPTURE_PATHS } from './capture-paths.js';
export { eventUuid } from './event-uuid.js';
export { assignOwn, setOwn } from './own-properties.js';
