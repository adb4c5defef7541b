#!/usr/bin/env bash
# DynamoDB Local (AWS's own emulator jar) for tests and `bridgeline dev --store dynamodb`.
#
#   scripts/dynamodb-local.sh install      fetch the jar once into .cache/dynamodb-local, print its folder
#   scripts/dynamodb-local.sh start [PORT] start it in memory on 127.0.0.1 (default port 8000),
#                                          wait until it answers, print the endpoint URL
#   scripts/dynamodb-local.sh stop         stop the instance that `start` started
#   scripts/dynamodb-local.sh endpoint     print the running instance's endpoint URL
#
# The jar ships inside the npm package amplify-dynamodb-simulator. Only the package's own
# tarball is needed (its JavaScript dependencies are not), so it is fetched with `npm pack`,
# which checks the registry's integrity hash, and unpacked without running any script.
# Java 17 runs it through scripts/dynamodb-local/LoopbackRunner.java, which binds it to
# 127.0.0.1 (the jar alone listens on every interface) and never sets up its telemetry
# (DDB_LOCAL_TELEMETRY=0 and -disableTelemetry as well).
set -euo pipefail
version="${DYNAMODB_SIMULATOR_VERSION:-2.9.30}"
root="$(cd "$(dirname "$0")/.." && pwd)"
base="$root/.cache/dynamodb-local"
dir="$base/$version/package/emulator"
launcher="$base/$version/launcher"
pidfile="$base/run.pid"
portfile="$base/run.port"

install() {
  mkdir -p "$base"
  # Test packages may install in parallel: one at a time.
  exec 9>"$base/install.lock"
  flock 9
  if [ -f "$dir/DynamoDBLocal.jar" ] && [ -f "$launcher/LoopbackRunner.class" ] &&
    [ "$launcher/LoopbackRunner.class" -nt "$root/scripts/dynamodb-local/LoopbackRunner.java" ]; then
    echo "$dir"
    return
  fi
  if [ -f "$dir/DynamoDBLocal.jar" ]; then
    compile
    echo "$dir"
    return
  fi
  command -v npm >/dev/null || { echo "dynamodb-local: npm is required" >&2; exit 1; }
  command -v java >/dev/null || { echo "dynamodb-local: java (17 or later) is required" >&2; exit 1; }
  work="$(mktemp -d "$base/tmp.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  echo "dynamodb-local: fetching amplify-dynamodb-simulator@$version (first run only)" >&2
  (cd "$work" && npm pack --silent --ignore-scripts "amplify-dynamodb-simulator@$version" >/dev/null)
  mkdir -p "$base/$version"
  tar -xzf "$work"/amplify-dynamodb-simulator-"$version".tgz -C "$base/$version" package/emulator
  [ -f "$dir/DynamoDBLocal.jar" ] || { echo "dynamodb-local: DynamoDBLocal.jar missing from the package" >&2; exit 1; }
  compile
  echo "$dir"
}

compile() {
  command -v javac >/dev/null || { echo "dynamodb-local: javac (JDK 17 or later) is required" >&2; exit 1; }
  rm -rf "$launcher"
  mkdir -p "$launcher"
  javac -nowarn -d "$launcher" -cp "$dir/DynamoDBLocal.jar:$dir/DynamoDBLocal_lib/*" \
    "$root/scripts/dynamodb-local/LoopbackRunner.java"
}

running() {
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

start() {
  local port="${1:-8000}"
  install >/dev/null
  if running; then
    echo "http://127.0.0.1:$(cat "$portfile")"
    return
  fi
  mkdir -p "$base"
  # It writes a metadata file into its working folder: keep that out of the work tree.
  (cd "$base" && DDB_LOCAL_TELEMETRY=0 exec nohup java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Djava.library.path="$dir/DynamoDBLocal_lib" \
    -cp "$launcher:$dir/DynamoDBLocal.jar:$dir/DynamoDBLocal_lib/*" LoopbackRunner \
    -inMemory -sharedDb -disableTelemetry -port "$port" \
    >"$base/run.log" 2>&1) &
  echo $! >"$pidfile"
  echo "$port" >"$portfile"
  # Ready when it answers HTTP; bounded to about 30 s.
  for _ in $(seq 1 150); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "http://127.0.0.1:$port"
      return
    fi
    if ! running; then
      echo "dynamodb-local: exited during start; log:" >&2
      cat "$base/run.log" >&2
      exit 1
    fi
    sleep 0.2
  done
  echo "dynamodb-local: not answering on port $port after 30 s" >&2
  stop
  exit 1
}

stop() {
  if running; then
    kill "$(cat "$pidfile")"
    for _ in $(seq 1 50); do running || break; sleep 0.1; done
  fi
  rm -f "$pidfile" "$portfile"
}

endpoint() {
  running || { echo "dynamodb-local: not running" >&2; exit 1; }
  echo "http://127.0.0.1:$(cat "$portfile")"
}

case "${1:-}" in
  install) install ;;
  start) start "${2:-}" ;;
  stop) stop ;;
  endpoint) endpoint ;;
  *) echo "usage: $0 install|start [port]|stop|endpoint" >&2; exit 2 ;;
esac
