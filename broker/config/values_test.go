package config

import (
	"reflect"
	"testing"
)

// TestValuesAgreeWithApply: every setting's value, as Values shows it,
// applied again gives the same settings, for the defaults and for
// settings each key changed; a key the properties set is Given.
func TestValuesAgreeWithApply(t *testing.T) {
	changed := DefaultSettings()
	props := map[string]string{
		"num.partitions": "6", "log.retention.ms": "3600000", "log.flush.interval.ms": "250",
		"unclean.leader.election.enable": "true", "compression.type": "zstd", "group.initial.rebalance.delay.ms": "0",
		"offsets.compact.bytes": "1048576", "replica.fetch.wait.max.ms": "100",
	}
	if _, err := changed.Apply(props); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]Settings{"defaults": DefaultSettings(), "changed": changed} {
		values := s.Values(nil)
		if len(values) != len(SettingKeys()) {
			t.Fatalf("%s: %d values for %d keys", name, len(values), len(SettingKeys()))
		}
		again := DefaultSettings()
		for _, v := range values {
			if v.Value == "" || v.Name == "log.retention.hours" { // unset, or log.retention.ms less precisely
				continue
			}
			if _, err := again.Apply(map[string]string{v.Name: v.Value}); err != nil {
				t.Fatalf("%s: %s=%s: %v", name, v.Name, v.Value, err)
			}
		}
		if !reflect.DeepEqual(again, s) {
			t.Fatalf("%s: applying every value gives\n%+v\nnot\n%+v", name, again, s)
		}
	}
	byName := map[string]SettingValue{}
	for _, v := range changed.Values([]string{"log.retention.ms"}) {
		byName[v.Name] = v
	}
	for name, want := range map[string]SettingValue{
		"log.retention.ms":            {Value: "3600000", Given: true},
		"log.retention.hours":         {Value: "1"},
		"log.flush.interval.ms":       {Value: "250"},
		"log.flush.interval.messages": {Value: ""},
		"num.partitions":              {Value: "6"},
		"compression.type":            {Value: "zstd"},
	} {
		if got := byName[name]; got.Value != want.Value || got.Given != want.Given || got.Doc == "" {
			t.Errorf("%s = %+v, want value %q given %v", name, got, want.Value, want.Given)
		}
	}
}
