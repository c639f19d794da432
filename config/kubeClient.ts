/**
 * The Kubernetes provider's client to the API server (issue 29), set for every stack in Pulumi.yaml
 * as `kubernetes:kubeClientSettings` (tools/projectFile.ts). Provider 4.25.0 throttles its client
 * to 50 requests a second with bursts of 120 unless told otherwise (pkg/provider/provider.go:803-822;
 * the fields `burst`, `qps`, `timeout` of KubeClientSettings, pkg/provider/types.go:35-42). A
 * refresh reads every object (one GET each) and an up applies and watches each, so with about 400
 * objects the throttle, not the API server, set the pace of `pulumi preview --refresh`. kubectl
 * makes the same requests unthrottled. With these limits the pace is set by the engine's steps in
 * flight (`--parallel`), as for kubectl; the API server's own flow control still applies.
 */
export const KUBE_CLIENT_SETTINGS = { qps: 1000, burst: 1000 } as const;
