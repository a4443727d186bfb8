#!/usr/bin/env bash
# Installs (once) and starts or stops S3Proxy, a real S3 API server keeping buckets as folders under
# the state folder, on 127.0.0.1:${S3PROXY_PORT:-8333}. Batch-export tests and `make up` write to it
# as to S3, with the fixed development identity below (S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY).
# Starting it also makes the bucket the README's export example writes to (`analytics`), once.
source "$(dirname "$0")/../lib.sh"

S3PROXY_DIR="$STATE/s3proxy"
# Like Kafka's, the jars are the same for every state folder, so they are fetched once per checkout.
LIBS="$ROOT/.tributary/s3proxy/libs"
PIDFILE="$STATE/pids/s3proxy.pid"
PORT=${S3PROXY_PORT:-8333}
IDENTITY=${S3_ACCESS_KEY_ID:-tributary}
CREDENTIAL=${S3_SECRET_ACCESS_KEY:-tributary-secret}

install() {
  fetch_maven_jars "S3Proxy" "$ROOT/infra/s3proxy/pom.xml" "$LIBS"
}

# The bucket the README's S3 export writes to. Created through the S3 API (signed as the AWS SDK
# signs), so it is a bucket like any other; S3Proxy answers 409 for one that already exists.
README_BUCKET=analytics
ensure_bucket() {
  local status
  status=$(curl -s -o /dev/null -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:s3" --user "$IDENTITY:$CREDENTIAL" \
    -H "x-amz-content-sha256: $(printf '' | sha256sum | cut -d' ' -f1)" -X PUT "http://127.0.0.1:$PORT/$1")
  case "$status" in
    200) log "created the S3 bucket $1 in s3proxy" ;;
    409) ;;
    *) die "s3proxy answered $status to creating the bucket $1 (see $STATE/logs/s3proxy.log)" ;;
  esac
}

start() {
  install
  if pid_alive "$PIDFILE"; then log "s3proxy already running"; else launch; fi
  ensure_bucket "$README_BUCKET"
}

launch() {
  port_open 127.0.0.1 "$PORT" && die "port $PORT is taken by a process this project did not start"
  mkdir -p "$S3PROXY_DIR/data"
  # aws-v2-or-v4 accepts both signature versions, as S3 does; the AWS SDK signs with v4. The
  # filesystem backend ignores its own jclouds identity, but S3Proxy insists on one.
  cat > "$S3PROXY_DIR/s3proxy.properties" <<PROPERTIES
s3proxy.endpoint=http://127.0.0.1:$PORT
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=$IDENTITY
s3proxy.credential=$CREDENTIAL
jclouds.provider=filesystem-nio2
jclouds.identity=unused
jclouds.credential=unused
jclouds.filesystem.basedir=$S3PROXY_DIR/data
PROPERTIES
  log "starting s3proxy"
  setsid nohup java -Xms64m -Xmx256m -Dlogback.configurationFile="$ROOT/infra/s3proxy/logback.xml" -cp "$LIBS/*" org.gaul.s3proxy.Main --properties "$S3PROXY_DIR/s3proxy.properties" \
    >> "$STATE/logs/s3proxy.log" 2>&1 &
  echo $! > "$PIDFILE"
  wait_until 60 "s3proxy" listening_or_exited
  pid_alive "$PIDFILE" || die "s3proxy exited at start (see $STATE/logs/s3proxy.log)"
}

# A bad configuration makes S3Proxy exit at once: stop waiting then rather than at the timeout.
listening_or_exited() { ! pid_alive "$PIDFILE" || port_open 127.0.0.1 "$PORT"; }

case "${1:-}" in
  install) install ;;
  start) start ;;
  bucket) ensure_bucket "${2:?usage: s3proxy.sh bucket NAME}" ;;
  stop) stop_pidfile "$PIDFILE" s3proxy ;;
  *) die "usage: s3proxy.sh install|start|stop|bucket NAME" ;;
esac
