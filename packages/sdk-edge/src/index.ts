export { answeredByCors, sdkCors } from './sdk-cors.js';
export { decodeSdkPayload, readSdkBody, sdkQuery, type SdkQuery } from './sdk-payload.js';
