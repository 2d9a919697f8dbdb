package bytesize

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"1048576": 1 << 20, "500MB": 500 << 20, "2G": 2 << 30, "1.5GiB": 3 << 29, " 6 gib ": 6 << 30,
		"10k": 10 << 10, "1T": 1 << 40, "7B": 7, "0": 0, "0GiB": 0,
	} {
		got, err := Parse(in, NonNegative)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{"", "lots", "-1G", "1e9", "1PB", "G", "1.2.3M", "Inf", "NaN", "9999999999T", "1 2"} {
		if n, err := Parse(in, NonNegative); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", in, n)
		}
	}
}

func TestPositive(t *testing.T) {
	for _, in := range []string{"0", "0GiB", "0.0000001B", "0.0K"} {
		if n, err := Parse(in, Positive); err == nil {
			t.Errorf("Parse(%q, Positive) = %d, want an error", in, n)
		}
	}
	if n, err := Parse("512MiB", Positive); err != nil || n != 512<<20 {
		t.Errorf("Parse(512MiB, Positive) = %d, %v", n, err)
	}
}
