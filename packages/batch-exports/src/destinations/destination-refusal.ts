import { DestinationRefused } from '../destination-address/destination-refused.js';
import { DestinationUnresolved, type DestinationGuard } from '../destination-address/destination-guard.js';
import type { DestinationSpec } from './destination.js';

/** Where a destination connects, as its config says it: the field, host and port. */
interface Endpoint {
  field: 'url' | 'endpoint_url' | 'host';
  host: string;
  port: number;
  database?: string;
}

const urlEndpoint = (field: Endpoint['field'], url: string): Endpoint => {
  const parsed = new URL(url);
  return { field, host: parsed.hostname, port: Number(parsed.port) || (parsed.protocol === 'https:' ? 443 : 80) };
};

/** Null for S3 without an endpoint_url: the SDK's AWS endpoint, which the guard checks as it connects. */
function endpointOf(spec: DestinationSpec): Endpoint | null {
  switch (spec.type) {
    case 'HTTP':
      return urlEndpoint('url', spec.config.url);
    case 'S3':
      return spec.config.endpoint_url === null ? null : urlEndpoint('endpoint_url', spec.config.endpoint_url);
    case 'Postgres':
      return { field: 'host', host: spec.config.host, port: spec.config.port, database: spec.config.database };
  }
}

/**
 * Why a destination, as it would be saved, may not be reached, naming the config field; null
 * when the guard accepts where it points now. Runs check again as they connect.
 */
export async function destinationRefusal(spec: DestinationSpec, guard: DestinationGuard): Promise<{ field: Endpoint['field']; reason: string } | null> {
  const endpoint = endpointOf(spec);
  if (!endpoint) return null;
  try {
    await guard.check(endpoint.host, endpoint.port, endpoint.database);
    return null;
  } catch (error) {
    if (error instanceof DestinationRefused || error instanceof DestinationUnresolved) return { field: endpoint.field, reason: error.message };
    throw error;
  }
}
