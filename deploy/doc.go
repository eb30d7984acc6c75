// Package deploy holds Strait's deployment files: the Kubernetes manifests in
// kubernetes/ (applied with kubectl apply -k). It has no code; its test holds
// the manifests to the Kubernetes API types, to the image's Dockerfile, to
// Strait's own config loader and to its API, so that a manifest that could
// not run fails go test.
package deploy
