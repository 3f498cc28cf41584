package nodeagent

import "testing"

func TestExpand(t *testing.T) {
	vars := map[string]string{"POD_IP": "127.0.10.2", "NAME": "kairo-0", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	for in, want := range map[string]string{
		"--listen=$(POD_IP):8080": "--listen=127.0.10.2:8080",
		"$(NAME).$(NAME)":         "kairo-0.kairo-0",
		"$(UNKNOWN)":              "$(UNKNOWN)",
		"$$(POD_IP)":              "$(POD_IP)",
		"cost $5":                 "cost $5",
		"trailing $":              "trailing $",
		"$(EMPTY)x":               "x",
		"$(POD_IP":                "$(POD_IP",
		"$()":                     "$()",
		"plain":                   "plain",
		"$$$(NAME)":               "$kairo-0",
	} {
		if got := expand(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}
