package runner

import (
	"os"
	"runtime"

	"github.com/vzn/vx/engine/git"
	"github.com/vzn/vx/engine/store"
)

// ciProviders are the CI services vx names, each by the variable its runners set, in the order
// they are asked.
var ciProviders = []struct{ env, name string }{
	{"GITHUB_ACTIONS", "github-actions"},
	{"GITLAB_CI", "gitlab"},
	{"CIRCLECI", "circleci"},
	{"BUILDKITE", "buildkite"},
	{"TF_BUILD", "azure-pipelines"},
	{"JENKINS_URL", "jenkins"},
	{"BITBUCKET_BUILD_NUMBER", "bitbucket"},
	{"TRAVIS", "travis"},
	{"DRONE", "drone"},
	{"TEAMCITY_VERSION", "teamcity"},
	{"CODEBUILD_BUILD_ID", "aws-codebuild"},
	{"VERCEL", "vercel"},
	{"NETLIFY", "netlify"},
}

// runContext is where a run of the workspace at root runs: HEAD's commit and branch (read from
// the files git keeps: no process is started), the CI service the environment names, the system
// and vx's version. What is not known stays empty.
func runContext(root, version string, getenv func(string) string) store.RunContext {
	if getenv == nil {
		getenv = os.Getenv
	}
	rc := store.RunContext{OS: runtime.GOOS, Arch: runtime.GOARCH, VxVersion: version}
	rc.CommitSHA, rc.Branch, _ = git.Head(root)
	for _, p := range ciProviders {
		if getenv(p.env) != "" {
			rc.CI, rc.CIProvider = true, p.name
			break
		}
	}
	if ci := getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		rc.CI = true
	}
	return rc
}
