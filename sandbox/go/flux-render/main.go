// Command flux-render renders a Flux Kustomization exactly as kustomize-controller
// does, by calling the same library (github.com/fluxcd/pkg/kustomize): the
// generator (spec.targetNamespace, namePrefix/Suffix, commonMetadata, patches,
// images, components; a kustomization.yaml is generated when the path has none),
// a secure kustomize build (no files outside --root, no remote bases), then
// postBuild variable substitution. Variables come only from the Kustomization
// object given (spec.postBuild.substitute): the caller merges ConfigMap values
// into it; Secret values are never read.
//
//	flux-render --root DIR --path ./overlays/dev --kustomization ks.yaml > rendered.yaml
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	securejoin "github.com/cyphar/filepath-securejoin"
	"github.com/fluxcd/pkg/kustomize"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	os.Exit(1)
}

func libVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/fluxcd/pkg/kustomize" {
				return d.Version
			}
		}
	}
	return "unknown"
}

func main() {
	root := flag.String("root", "", "the extracted source artifact (nothing outside it is read)")
	path := flag.String("path", "./", "spec.path inside the artifact")
	ksFile := flag.String("kustomization", "", "the Flux Kustomization object (YAML or JSON)")
	version := flag.Bool("version", false, "print the renderer version")
	flag.Parse()
	if *version {
		fmt.Printf("flux-render github.com/fluxcd/pkg/kustomize@%s\n", libVersion())
		return
	}
	if *root == "" || *ksFile == "" {
		fail("--root and --kustomization are required")
	}
	data, err := os.ReadFile(*ksFile)
	if err != nil {
		fail("read kustomization: %v", err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		fail("parse kustomization: %v", err)
	}
	ks := unstructured.Unstructured{Object: obj}
	dir, err := securejoin.SecureJoin(*root, *path)
	if err != nil {
		fail("path %q: %v", *path, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		fail("kustomization path not found: %s", *path)
	}
	gen := kustomize.NewGenerator(*root, ks)
	action, err := gen.WriteFile(dir, kustomize.WithSaveOriginalKustomization())
	if err != nil {
		fail("kustomize generator: %v", err)
	}
	defer func() { _ = kustomize.CleanDirectory(dir, action) }()
	resMap, err := kustomize.SecureBuild(*root, dir, false)
	if err != nil {
		fail("kustomize build failed: %v", err)
	}
	out := os.Stdout
	for _, res := range resMap.Resources() {
		outRes, err := kustomize.SubstituteVariables(context.Background(), nil, ks, res, kustomize.SubstituteWithDryRun(true))
		if err != nil {
			fail("post-build substitution of %s/%s: %v", res.GetKind(), res.GetName(), err)
		}
		if outRes == nil {
			outRes = res
		}
		y, err := outRes.AsYAML()
		if err != nil {
			fail("encode %s/%s: %v", res.GetKind(), res.GetName(), err)
		}
		fmt.Fprintf(out, "---\n%s", y)
	}
}
