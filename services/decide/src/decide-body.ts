/** What `/decide` and `/flags` read from a request's body (or its `data` parameter), once decoded. */
export interface DecideBody {
  api_key?: string;
  token?: string;
  distinct_id: string | number;
  groups?: Record<string, string | number>;
  person_properties?: Record<string, unknown>;
  group_properties?: Record<string, Record<string, unknown>>;
  $anon_distinct_id?: string | number | null;
  /** Server SDKs (posthog-node by default) ask for no location: their address is the server's. */
  geoip_disable?: boolean;
}

export const DECIDE_BODY_SCHEMA = {
  type: 'object',
  required: ['distinct_id'],
  properties: {
    api_key: { type: 'string' },
    token: { type: 'string' },
    distinct_id: { type: ['string', 'number'] },
    groups: { type: 'object', additionalProperties: { type: ['string', 'number'] } },
    person_properties: { type: 'object' },
    group_properties: { type: 'object', additionalProperties: { type: 'object' } },
    $anon_distinct_id: { type: ['string', 'number', 'null'] },
    geoip_disable: { type: 'boolean' },
  },
};
