// The Prometheus Operator release whose PrometheusRule CRD schema `rulegen check` validates
// rendered charts against. Source only: scripts/install-tools.sh fetches the module with
// `go mod download -json` and copies example/prometheus-operator-crd/
// monitoring.coreos.com_prometheusrules.yaml into the tools folder; nothing is built.
module rulegen.local/tools/prometheus-operator

go 1.26.8

require github.com/prometheus-operator/prometheus-operator v0.85.0
