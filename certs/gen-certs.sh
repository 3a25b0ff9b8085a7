#!/bin/sh
# Creates a CA and an ECDSA P-256 serving certificate for the webhook's Service with the
# openssl CLI, and prints the caBundle (base64 of the CA's PEM) for the webhook
# configurations.
#
#   certs/gen-certs.sh [--service wmap-webhook] [--namespace wmap-system] [--out DIR]
#                      [--days 365] [--ca-days 3650] [--ip 127.0.0.1]... [--dns NAME]...
#                      [--reuse-ca]
#
# Files in DIR: ca.crt ca.key tls.crt tls.key (the names a kubernetes.io/tls Secret and
# cert-manager use), cabundle.b64. SANs: SERVICE, SERVICE.NAMESPACE, SERVICE.NAMESPACE.svc,
# SERVICE.NAMESPACE.svc.cluster.local, plus localhost/127.0.0.1 for local tests and every
# --dns/--ip given. --reuse-ca signs a new serving certificate with the CA already in DIR
# (a rotation that keeps caBundle valid).
set -eu

service=wmap-webhook
namespace=wmap-system
out=certs/out
days=365
ca_days=3650
reuse_ca=0
extra_dns=""
extra_ip=""

while [ $# -gt 0 ]; do
	case "$1" in
	--service) service=$2; shift 2 ;;
	--namespace) namespace=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--days) days=$2; shift 2 ;;
	--ca-days) ca_days=$2; shift 2 ;;
	--dns) extra_dns="$extra_dns $2"; shift 2 ;;
	--ip) extra_ip="$extra_ip $2"; shift 2 ;;
	--reuse-ca) reuse_ca=1; shift ;;
	-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "gen-certs.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

command -v openssl >/dev/null || { echo "gen-certs.sh: openssl not found" >&2; exit 1; }
mkdir -p "$out"
umask 077
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$reuse_ca" = 0 ] || [ ! -s "$out/ca.key" ] || [ ! -s "$out/ca.crt" ]; then
	openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/ca.key"
	openssl req -x509 -new -key "$tmp/ca.key" -sha256 -days "$ca_days" \
		-subj "/CN=wmap-webhook-ca" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" \
		-out "$tmp/ca.crt" 2>/dev/null
	mv "$tmp/ca.key" "$out/ca.key"
	mv "$tmp/ca.crt" "$out/ca.crt"
fi

san="DNS:$service,DNS:$service.$namespace,DNS:$service.$namespace.svc"
san="$san,DNS:$service.$namespace.svc.cluster.local,DNS:localhost,IP:127.0.0.1"
for d in $extra_dns; do san="$san,DNS:$d"; done
for i in $extra_ip; do san="$san,IP:$i"; done

cat > "$tmp/ext.cnf" <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=$san
EOF

openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/tls.key.ec"
# PKCS#8 ("BEGIN PRIVATE KEY"), which every TLS library reads.
openssl pkcs8 -topk8 -nocrypt -in "$tmp/tls.key.ec" -out "$tmp/tls.key"
openssl req -new -key "$tmp/tls.key" -subj "/CN=$service.$namespace.svc" -out "$tmp/tls.csr"
openssl x509 -req -in "$tmp/tls.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" \
	-CAcreateserial -CAserial "$tmp/ca.srl" -sha256 -days "$days" \
	-extfile "$tmp/ext.cnf" -out "$tmp/tls.crt" 2>/dev/null
chmod 0644 "$tmp/tls.crt" "$out/ca.crt"
chmod 0600 "$tmp/tls.key"
# Key first, then certificate, each by rename: a reader never sees a torn file.
mv "$tmp/tls.key" "$out/tls.key"
mv "$tmp/tls.crt" "$out/tls.crt"

base64 < "$out/ca.crt" | tr -d '\n' > "$out/cabundle.b64"
echo "certificates for $service.$namespace.svc written to $out" >&2
echo "caBundle:" >&2
cat "$out/cabundle.b64"
echo
