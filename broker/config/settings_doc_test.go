package config

import (
	"os"
	"strings"
	"testing"
)

// TestEveryKeyIsDocumented keeps docs/configuration.md complete.
func TestEveryKeyIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range SettingKeys() {
		if !strings.Contains(string(doc), "`"+k+"`") {
			t.Errorf("docs/configuration.md does not document %s", k)
		}
	}
}
