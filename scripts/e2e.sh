#!/usr/bin/env bash
# make e2e: the chart on a real cluster (kind). Needs docker, kind, kubectl and helm on PATH.
# NOT RUN on the development machines or in CI (no Docker there): written to work, kept short.
set -euo pipefail
CLUSTER=${CLUSTER:-svc-e2e}
TAG=${TAG:-e2e}
NS=svc-system
cleanup() { [ "${KEEP:-}" = 1 ] || kind delete cluster --name "$CLUSTER"; }
trap cleanup EXIT

kind create cluster --name "$CLUSTER" --wait 120s
docker build -f images/svc/Dockerfile -t "ghcr.io/svc-dev/svc:$TAG" .
docker build -f images/sandbox/Dockerfile -t "ghcr.io/svc-dev/svc-sandbox:$TAG" .
kind load docker-image --name "$CLUSTER" "ghcr.io/svc-dev/svc:$TAG" "ghcr.io/svc-dev/svc-sandbox:$TAG"

# The sandboxes run the image's opencode; without a model key a turn retries, which is enough to see
# a session reach `running` with a real Pod. The project is a public repository (E2E_REPO).
helm install svc charts/svc -n "$NS" --create-namespace --wait --timeout 5m \
  --set image.tag="$TAG" --set image.pullPolicy=Never \
  --set sandbox.image.tag="$TAG" --set sandbox.image.pullPolicy=Never
helm test svc -n "$NS" --timeout 2m

kubectl -n "$NS" port-forward svc/svc-api 18080:80 >/dev/null 2>&1 &
PF=$!
trap 'kill $PF; cleanup' EXIT
sleep 3
# the first token, written with the admin's kubeconfig (svc tokens create, docs/tokens.md)
TOKEN=$(node bin/svc.js tokens create --name e2e --write --capability '*' -n "$NS" --project-namespace default --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).value))')
export SVC_API_URL=http://127.0.0.1:18080/v1 SVC_CLI_TOKEN=$TOKEN
node bin/svc.js projects create e2e --repo "${E2E_REPO:-https://github.com/octocat/Hello-World.git}"
SESSION=$(node bin/svc.js sessions create e2e --prompt "add a line to README" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).id))')
kubectl wait --for=jsonpath='{.status.state}'=active "sandbox/$SESSION" -n default --timeout 5m
kubectl get pod -n default -l "svc.dev/sandbox=$SESSION" -o wide
node bin/svc.js sessions stop "$SESSION"
kubectl wait --for=delete pod -n default -l "svc.dev/sandbox=$SESSION" --timeout 2m
node bin/svc.js cr ls e2e
echo "e2e: ok"
