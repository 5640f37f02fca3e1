#!/bin/sh
# A demo trust domain for multi-network (docs/multi-network.md): one CA, and a certificate per cluster whose
# URI SAN is spiffe://<trust-domain>/cluster/<cluster>, as --network-tls-cert, --network-tls-key and
# --network-trust-bundle read them. For demos and tests: a real fleet gets these from its PKI (cert-manager,
# SPIRE, a cloud CA), short-lived and rotated; the gateway reads the files again when they change.
#
#   scripts/network-certs.sh DIR TRUST_DOMAIN CLUSTER...
#   scripts/network-certs.sh /tmp/certs demo.clusterset.local east-1 west-1
#   -> DIR/ca.crt (the trust bundle), DIR/ca.key, DIR/east-1.crt, DIR/east-1.key, DIR/west-1.crt, ...
set -eu
if [ "$#" -lt 3 ]; then
  echo "usage: $0 DIR TRUST_DOMAIN CLUSTER..." >&2
  exit 2
fi
dir=$1
domain=$2
shift 2
mkdir -p "$dir"
if [ ! -f "$dir/ca.crt" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" -days 365 -subj "/CN=$domain network CA" 2>/dev/null
fi
for cluster in "$@"; do
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$dir/$cluster.key" -out "$dir/$cluster.csr" -subj "/CN=$cluster" 2>/dev/null
  printf 'subjectAltName=URI:spiffe://%s/cluster/%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$domain" "$cluster" \
    >"$dir/$cluster.ext"
  openssl x509 -req -in "$dir/$cluster.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 30 -extfile "$dir/$cluster.ext" -out "$dir/$cluster.crt" 2>/dev/null
  rm -f "$dir/$cluster.csr" "$dir/$cluster.ext"
  echo "$dir/$cluster.crt  spiffe://$domain/cluster/$cluster"
done
