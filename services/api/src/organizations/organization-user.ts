/** Columns of `users` (aliased `u`) that make up the user object PostHog nests in members. */
export const USER_COLUMNS = `u.id AS user_id, u.uuid AS user_uuid, u.distinct_id AS user_distinct_id, u.first_name AS user_first_name,
  u.last_name AS user_last_name, u.email AS user_email, u.is_email_verified AS user_is_email_verified,
  u.hedgehog_config AS user_hedgehog_config, u.role_at_organization AS user_role_at_organization`;

export interface UserColumns {
  user_id: number;
  user_uuid: string;
  user_distinct_id: string;
  user_first_name: string;
  user_last_name: string;
  user_email: string;
  user_is_email_verified: boolean;
  user_hedgehog_config: Record<string, unknown>;
  user_role_at_organization: string;
}

export function presentUser(row: UserColumns) {
  return {
    id: row.user_id,
    uuid: row.user_uuid,
    distinct_id: row.user_distinct_id,
    first_name: row.user_first_name,
    last_name: row.user_last_name,
    email: row.user_email,
    is_email_verified: row.user_is_email_verified,
    hedgehog_config: row.user_hedgehog_config,
    role_at_organization: row.user_role_at_organization,
  };
}
