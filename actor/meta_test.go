package actor

import (
	"encoding/json"
	"testing"
)

// readMeta finds params._meta however its key is spelt, and answers nothing for params without
// one, which it reads no further.
func TestReadMeta(t *testing.T) {
	for _, c := range []struct {
		params, version, token string
	}{
		{`{"name":"x","arguments":{"cursor":"abc"}}`, "", ""},
		{`{"name":"x","_meta":{"progressToken":"t1","io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`, "2025-11-25", `"t1"`},
		{`{"name":"x","_m\u0065ta":{"progressToken":7}}`, "", "7"},
		{`{"name":"x","arguments":{"note":"_meta"}}`, "", ""},
	} {
		rm := readMeta(json.RawMessage(c.params))
		version, token := rm.version, rm.progressToken
		if version != c.version || string(token) != c.token {
			t.Errorf("readMeta(%s) = %q, %s; want %q, %s", c.params, version, token, c.version, c.token)
		}
	}
}
