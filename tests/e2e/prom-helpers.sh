# shellcheck shell=bash
# Helpers for scenarios that run a real Prometheus (Debian's `prometheus` package, installed
# by `make e2e-deps`, which `make check` runs) on loopback. Sourced after lib.sh.
#
#   prom_require NAME            skips the scenario ("NAME: skipped: ...", exit 0) when
#                                prometheus or promtool is not installed
#   prom_serve_file NAME FILE    serves FILE over plain HTTP on a free loopback port (a stand-in
#                                for an exporter); sets PROM_FILE_PORT
#   prom_start CONFIG            prometheus with CONFIG (YAML) on a free port, storage in
#                                $E2E_TMP; sets PROM_URL and waits until it is ready
#   prom_query EXPR              an instant query: the JSON result array (.data.result)
#   prom_value EXPR              the value of a query that gives one sample (empty if none)
#   prom_targets_up N            condition: N active targets, all health "up"

prom_require() {
    local tool
    for tool in prometheus promtool; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            echo "$1: skipped: $tool is not installed (make e2e-deps installs Debian's prometheus)"
            exit 0
        fi
    done
}

prom_serve_file() {
    mkdir -p "$E2E_TMP/$1"
    cp "$2" "$E2E_TMP/$1/metrics"
    PROM_FILE_PORT=$(free_port)
    export PROM_FILE_PORT
    start_bg "$1" "cmd:curl -sf --noproxy '*' http://127.0.0.1:$PROM_FILE_PORT/metrics >/dev/null" 20 \
        python3 -m http.server --bind 127.0.0.1 --directory "$E2E_TMP/$1" "$PROM_FILE_PORT"
}

prom_start() {
    local port
    port=$(free_port)
    PROM_URL=http://127.0.0.1:$port
    export PROM_URL
    promtool check config "$1" >"$E2E_TMP/promtool-config.out" 2>&1 ||
        fail "promtool check config: $(cat "$E2E_TMP/promtool-config.out")"
    start_bg prometheus "cmd:curl -sf --noproxy '*' $PROM_URL/-/ready >/dev/null" 60 \
        prometheus --config.file="$1" --web.listen-address="127.0.0.1:$port" \
        --storage.tsdb.path="$E2E_TMP/prometheus-data" --log.level=warn
}

prom_query() {
    curl -sS --max-time 10 --noproxy '*' --get "$PROM_URL/api/v1/query" --data-urlencode "query=$1" |
        jq -c 'if .status == "success" then .data.result else error(.error) end'
}

prom_value() {
    prom_query "$1" | jq -r 'if length == 1 then .[0].value[1] else empty end'
}

prom_targets_up() {
    curl -sS --max-time 10 --noproxy '*' "$PROM_URL/api/v1/targets" |
        jq -e --argjson n "$1" '[.data.activeTargets[] | select(.health == "up")] | length == $n' >/dev/null
}
