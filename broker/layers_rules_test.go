package broker_test

import (
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Beyond the layers, docs/architecture.md states who may reach whom. Each
// rule names the packages it binds (an import path, or a prefix ending in
// "/...") and what of the broker they may import: directly (a front door
// goes through the core, it does not reach round it) or at any depth (the
// operator and kairoctl reach brokers only over their APIs). A rule may
// also forbid a module outright (a broker never reads a Kubernetes object).
var importRules = []struct {
	name  string
	binds []string
	// direct: check the package's own imports, not everything it pulls in.
	direct bool
	// allowed: the only broker/ packages the bound packages may import
	// (nil: any).
	allowed []string
	// forbidden: import path prefixes the bound packages may not import.
	forbidden []string
}{
	{
		name:    "a front door reaches replicas, groups, the cluster and storage only through the core",
		binds:   frontDoors,
		direct:  true,
		allowed: []string{"broker/api", "broker/auth", "broker/buffers", "broker/memory", "broker/topicconfig", "broker/core"},
	},
	{
		name:  "the operator and kairoctl reach brokers only over their APIs",
		binds: []string{"controllers/...", "cmd/manager", "cmd/kairoctl"},
		// broker/auth is a leaf: the operator salts a user's SCRAM
		// credential itself, so the password never travels to a broker.
		// broker/buffers and broker/tlsconf are leaves under broker/peer.
		allowed: []string{"broker/api", "broker/auth", "broker/buffers", "broker/client", "broker/peer", "broker/tlsconf"},
	},
	{
		name:      "the core speaks no wire format: it encodes neither JSON nor Kafka's protocol",
		binds:     []string{"broker/core"},
		direct:    true,
		forbidden: []string{"encoding/json", kafkaCodec},
	},
	{
		name: "only the Kafka front door speaks Kafka's protocol",
		binds: []string{"broker/api", "broker/config", "broker/core", "broker/coordinators", "broker/cluster/...",
			"broker/group", "broker/httpapi", "broker/client", "broker/memory", "broker/peer", "broker/replica", "broker/topicconfig"},
		direct:    true,
		forbidden: []string{kafkaCodec},
	},
	{
		name:      "a broker never reads a Kubernetes object",
		binds:     []string{"broker/...", "cmd/broker"},
		forbidden: []string{"k8s.io/", "sigs.k8s.io/"},
	},
}

// kafkaCodec is franz-go's Kafka protocol codec (kmsg, kerr, kbin, ...).
// Storage is not bound by it: its log holds Kafka's record batches; nor is
// broker/peer/binwire, which writes the binary peer bodies with kbin's
// primitives for the replica and the core.
const kafkaCodec = "github.com/twmb/franz-go/"

func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	for _, rule := range importRules {
		t.Run(rule.name, func(t *testing.T) {
			bound := 0
			for _, p := range pkgs {
				if !binds(rule.binds, p.path) {
					continue
				}
				bound++
				imports, verb := p.deps, "depends on"
				if rule.direct {
					imports, verb = p.imports, "imports"
				}
				for _, imp := range imports {
					if rule.allowed != nil && strings.HasPrefix(imp, "broker/") &&
						imp != p.path && !slices.Contains(rule.allowed, imp) {
						t.Errorf("%s %s %s; of the broker it may use only %v", p.path, verb, imp, rule.allowed)
					}
					for _, f := range rule.forbidden {
						if strings.HasPrefix(imp, f) {
							t.Errorf("%s %s %s", p.path, verb, imp)
						}
					}
				}
			}
			if bound == 0 {
				t.Errorf("the rule binds no package: %v", rule.binds)
			}
		})
	}
}

func binds(patterns []string, pkg string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "/..."); ok {
			if pkg == prefix || strings.HasPrefix(pkg, prefix+"/") {
				return true
			}
		} else if pkg == p {
			return true
		}
	}
	return false
}

// listedPackage is one package of the module: its path, its own imports
// and everything it depends on, module paths without the module prefix.
type listedPackage struct {
	path          string
	imports, deps []string
}

var listed struct {
	once sync.Once
	pkgs []listedPackage
	err  error
}

// listPackages runs go list over the module once per test binary.
func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	statSources(t)
	listed.once.Do(func() {
		out, err := exec.Command("go", "list", "-f",
			`{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, module+"...").Output()
		if err != nil {
			listed.err = err
			return
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Split(line, "|")
			listed.pkgs = append(listed.pkgs, listedPackage{
				path: strings.TrimPrefix(f[0], module), imports: trimModule(f[1]), deps: trimModule(f[2])})
		}
	})
	if listed.err != nil {
		t.Fatalf("go list: %v", listed.err)
	}
	return listed.pkgs
}

func trimModule(list string) []string {
	var out []string
	for _, p := range strings.Fields(list) {
		out = append(out, strings.TrimPrefix(p, module))
	}
	return out
}
