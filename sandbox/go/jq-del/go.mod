module gitops-console/sandbox/jq-del

go 1.26.0

require github.com/itchyny/gojq v0.12.20

require github.com/itchyny/timefmt-go v0.1.9 // indirect
