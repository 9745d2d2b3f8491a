module gitops-console/sandbox/gitserver

go 1.26.0
