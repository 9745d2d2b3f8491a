module gitops-console/sandbox/gitea

// Gitea, the sandbox forge, built from its own module (API + Git over HTTP; the
// web UI assets are not built). Its replace lines are copied from its go.mod.

go 1.26.2

require code.gitea.io/gitea v1.26.0

replace github.com/jaytaylor/html2text => github.com/Necoro/html2text v0.0.0-20250804200300-7bf1ce1c7347 
replace github.com/nektos/act => gitea.com/gitea/act v0.261.10 
replace github.com/urfave/cli/v3 => github.com/urfave/cli/v3 v3.4.1 
replace go.yaml.in/yaml/v4 => go.yaml.in/yaml/v4 v4.0.0-rc.3 
replace github.com/Azure/azure-sdk-for-go/sdk/azcore => github.com/Azure/azure-sdk-for-go/sdk/azcore v1.19.0 
replace github.com/Azure/azure-sdk-for-go/sdk/storage/azblob => github.com/Azure/azure-sdk-for-go/sdk/storage/azblob v1.6.2 
replace github.com/microsoft/go-mssqldb => github.com/microsoft/go-mssqldb v1.9.7 
