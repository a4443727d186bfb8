/** The query bench's ten typical HogQL queries (bench/query.ts, bench/scale.ts), by name. */
export const QUERIES: [string, string][] = [
  ['counts by event, 30 days', 'SELECT event, count() AS events FROM events WHERE timestamp > now() - INTERVAL 30 DAY GROUP BY event ORDER BY events DESC'],
  ['$browser breakdown', 'SELECT properties.$browser AS browser, count() AS events FROM events WHERE timestamp > now() - INTERVAL 30 DAY GROUP BY browser ORDER BY events DESC'],
  ['unique users per day', 'SELECT toStartOfDay(timestamp) AS day, uniq(distinct_id) AS users FROM events WHERE timestamp > now() - INTERVAL 30 DAY GROUP BY day ORDER BY day'],
  ['person plan = pro (join)', "SELECT event, count() AS events FROM events WHERE person.properties.plan = 'pro' AND timestamp > now() - INTERVAL 30 DAY GROUP BY event"],
  [
    'windowFunnel per user',
    "SELECT level, count() AS users FROM (SELECT distinct_id, windowFunnel(86400)(timestamp, event = '$pageview', event = 'button clicked') AS level FROM events WHERE timestamp > now() - INTERVAL 30 DAY GROUP BY distinct_id) GROUP BY level ORDER BY level",
  ],
  ['p90 $screen_width', 'SELECT quantile(0.9)(toFloat(properties.$screen_width)) AS p90 FROM events WHERE timestamp > now() - INTERVAL 30 DAY'],
  ['top paths', "SELECT properties.$pathname AS path, count() AS views FROM events WHERE event = '$pageview' AND timestamp > now() - INTERVAL 30 DAY GROUP BY path ORDER BY views DESC LIMIT 10"],
  ['events per hour, one day', 'SELECT toStartOfHour(timestamp) AS hour, count() AS events FROM events WHERE toDate(timestamp) = today() - 7 GROUP BY hour ORDER BY hour'],
  ['sessions, 30 days', 'SELECT uniq(properties.$session_id) AS sessions FROM events WHERE timestamp > now() - INTERVAL 30 DAY'],
  ['newest 100 events', 'SELECT uuid, event, timestamp, distinct_id, properties.$current_url AS url FROM events ORDER BY timestamp DESC LIMIT 100'],
];
