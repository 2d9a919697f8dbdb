package mask

import "testing"

func TestMasker(t *testing.T) {
	m := New("s3cret", "", "s3cret-longer", "-----BEGIN KEY-----\nAAAABBBBCCCCDDDD\nEEEE\n-----END KEY-----\n")
	for in, want := range map[string]string{
		"token s3cret here":           "token *** here",
		"token s3cret-longer here":    "token *** here", // the longer secret masked whole
		"line AAAABBBBCCCCDDDD alone": "line *** alone", // a line of a multi-line secret, read on its own
		"EEEE is too short to mask":   "EEEE is too short to mask",
		"-----BEGIN KEY-----\nAAAABBBBCCCCDDDD\nEEEE\n-----END KEY-----\n": "***",
		"nothing secret": "nothing secret",
	} {
		if got := m.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	var none *Masker
	if none.String("x") != "x" || !none.Empty() || New().Longest() != 0 {
		t.Error("the zero masker changed text")
	}
}
