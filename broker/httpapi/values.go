package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// configValue is a topic config value: a JSON string, or a number or boolean
// turned into its string form. null means "remove the override" (PATCH).
type configValue struct {
	v    string
	null bool
}

func (c *configValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		c.null = true
	case len(b) > 0 && b[0] == '"':
		return json.Unmarshal(b, &c.v)
	case bytes.Equal(b, []byte("true")), bytes.Equal(b, []byte("false")):
		c.v = string(b)
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		c.v = string(b)
	default:
		return &fieldError{"config", "values must be strings, numbers or booleans"}
	}
	return nil
}

// configMap is the "config" object of topic requests.
type configMap map[string]*configValue

// values returns the overrides to set and the keys to remove.
func (m configMap) values() (set map[string]string, remove []string) {
	set = map[string]string{}
	for k, v := range m {
		if v == nil || v.null {
			remove = append(remove, k)
			continue
		}
		set[k] = v.v
	}
	return set, remove
}

// acksValue is "1", "all", "-1" or the numbers 1 and -1.
type acksValue struct {
	set bool
	all bool
}

func (a *acksValue) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(bytes.TrimSpace(b)), `"`)
	switch strings.ToLower(s) {
	case "null":
		return nil
	case "1":
		a.set, a.all = true, false
	case "all", "-1":
		a.set, a.all = true, true
	default:
		return &fieldError{"acks", `must be "1", "all" or "-1", got ` + string(b)}
	}
	return nil
}

// int64Text renders n for error messages.
func int64Text(n int64) string { return strconv.FormatInt(n, 10) }
