module gitops-console/sandbox/registry

// CNCF Distribution, the sandbox OCI registry (filesystem store).

go 1.26.0

require github.com/distribution/distribution/v3 v3.1.2
