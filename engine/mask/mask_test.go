package mask

import (
	"strings"
	"testing"
)

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

// A value of a few characters is not masked: masking every "t" of every message would turn
// "entry rejected" into "en***ry rejec***ed". (A run refuses such a secret: Check.)
func TestShortValuesNotMasked(t *testing.T) {
	m := New("t", "ab", "xyz", "tokn")
	if got := m.String("entry rejected: ab xyz tokn"); got != "entry rejected: ab xyz ***" {
		t.Errorf("String = %q", got)
	}
	if m.Longest() != 4 {
		t.Errorf("Longest = %d, want 4", m.Longest())
	}
	if err := Check("DEPLOY_TOKEN", "t"); err == nil || !strings.Contains(err.Error(), "secret DEPLOY_TOKEN is 1 character") {
		t.Errorf("Check(short) = %v", err)
	}
	for _, v := range []string{"", "tokn", "ééééé"} {
		if err := Check("X", v); err != nil {
			t.Errorf("Check(%q) = %v", v, err)
		}
	}
}
