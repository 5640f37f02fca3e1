#!/bin/sh
# Installs the peers and load generators that `npm run bench` compares against: nginx, haproxy, wrk, h2load
# (Debian: nghttp2-client) for HTTP/2 over TLS, and nginx's stream module (Debian: libnginx-mod-stream) for the
# TLS passthrough peer.
# Debian/Ubuntu packages only; never needed by `npm test`. Safe to run twice: installs only what is missing.
set -eu

missing=""
command -v nginx >/dev/null 2>&1 || missing="$missing nginx"
command -v haproxy >/dev/null 2>&1 || missing="$missing haproxy"
command -v wrk >/dev/null 2>&1 || missing="$missing wrk"
command -v h2load >/dev/null 2>&1 || missing="$missing h2load"

# Where nginx builds the stream module as a loadable one, Debian packages it apart.
stream_module=""
if ! command -v nginx >/dev/null 2>&1 || { nginx -V 2>&1 | grep -q -- '--with-stream=dynamic' && [ ! -e /usr/lib/nginx/modules/ngx_stream_module.so ]; }; then
  stream_module="libnginx-mod-stream"
fi

if [ -z "$missing" ] && [ -z "$stream_module" ]; then
  echo "install-bench-tools: nginx (with its stream module), haproxy, wrk and h2load are already installed; nothing to do"
  exit 0
fi

echo "install-bench-tools: missing:$missing${stream_module:+ $stream_module}"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-bench-tools: apt-get not found; install$missing yourself (the bench skips what is missing)" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-bench-tools: not root and no sudo; install$missing yourself" >&2
    exit 1
  fi
fi

echo "install-bench-tools: apt-get update"
$SUDO apt-get update -qq

packages=""
for tool in $missing; do
  case "$tool" in
    # nginx-light is enough (no extra modules) where the distribution still ships it.
    nginx)
      if apt-cache show nginx-light >/dev/null 2>&1; then packages="$packages nginx-light"; else packages="$packages nginx"; fi
      ;;
    h2load) packages="$packages nghttp2-client" ;;
    *) packages="$packages $tool" ;;
  esac
done
if [ -n "$stream_module" ] && apt-cache show "$stream_module" >/dev/null 2>&1; then packages="$packages $stream_module"; fi
echo "install-bench-tools: apt-get install -y --no-install-recommends$packages"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $packages
for tool in $missing; do
  if command -v "$tool" >/dev/null 2>&1; then
    echo "install-bench-tools: installed $tool ($(command -v "$tool"))"
  else
    echo "install-bench-tools: $tool still missing after install" >&2
  fi
done
