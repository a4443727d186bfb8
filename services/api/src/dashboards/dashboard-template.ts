/** A PostHog dashboard template, as its template JSON export writes it, and its tiles. */
export interface TemplateTile {
  type: 'INSIGHT';
  name: string;
  description: string;
  query?: Record<string, unknown>;
  filters?: Record<string, unknown>;
  layouts: Record<string, unknown>;
  color: string | null;
}

/** A PostHog dashboard template, as the template JSON export writes it. */
export interface DashboardTemplate {
  template_name: string;
  dashboard_description: string;
  dashboard_filters: Record<string, unknown>;
  tags: string[];
  tiles: TemplateTile[];
}
