#!/bin/sh
# Writes the fleet's secret files into a folder (./secrets beside this script unless named), each
# one only if it is missing: the sealing key, the admin token, PostgreSQL's password and
# PgBouncer's list made from it, and a private CA with the certificate of the gateways' internal
# TLS listener. compose.yaml mounts them as Compose secrets; deploy/README.md makes Kubernetes
# secrets of the same files. Needs openssl 3.
set -eu

dir=${1:-$(dirname "$0")/secrets}
# The names the internal certificate answers to: the compose network's alias and the Kubernetes Service.
hosts=${FXGATE_INTERNAL_TLS_HOSTS:-gateways.fxgate.internal,fxgate-webhooks.fxgate.svc.cluster.local}

mkdir -p "$dir"
chmod 700 "$dir"
cd "$dir"
umask 077

# 32 random bytes in base64, the form FXGATE_SECRETS_KEY_FILE reads.
[ -s fxgate-secrets-key ] || openssl rand -base64 32 >fxgate-secrets-key
[ -s fxgate-admin-token ] || openssl rand -base64 32 >fxgate-admin-token
[ -s postgres-password ] || openssl rand -hex 24 >postgres-password
[ -s pgbouncer-userlist ] || printf '"fxgate" "%s"\n' "$(cat postgres-password)" >pgbouncer-userlist

if [ ! -s fxgate-internal-ca ] || [ ! -s fxgate-internal-tls ]; then
  san=$(printf '%s' "$hosts" | sed 's/\([^,]*\)/DNS:\1/g')
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj '/CN=fxgate internal CA' -keyout internal-ca.key -out fxgate-internal-ca 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -subj "/CN=${hosts%%,*}" -addext "subjectAltName=$san" \
    -keyout internal-tls.key -out internal-tls.csr 2>/dev/null
  openssl x509 -req -in internal-tls.csr -CA fxgate-internal-ca -CAkey internal-ca.key -CAcreateserial \
    -days 825 -copy_extensions copy -out internal-tls.crt 2>/dev/null
  # haproxy reads the certificate and its key from one file.
  cat internal-tls.crt internal-tls.key >fxgate-internal-tls
  rm -f internal-tls.csr internal-tls.crt internal-tls.key fxgate-internal-ca.srl internal-ca.srl
fi

# The containers read them as their own users (node, haproxy, nobody, postgres); the folder stays its owner's.
chmod 444 fxgate-secrets-key fxgate-admin-token postgres-password pgbouncer-userlist fxgate-internal-ca fxgate-internal-tls
echo "secrets in $(pwd); keep internal-ca.key apart (it signs a new internal certificate)"
