package logging

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// logAll writes one event at each level and returns the messages that came out, with their level.
func logAll(t *testing.T, level string) []string {
	t.Helper()
	var buf bytes.Buffer
	log, err := New(&buf, level)
	if err != nil {
		t.Fatalf("New(%q): %v", level, err)
	}
	log.Debug().Msg("d")
	log.Info().Msg("i")
	log.Warn().Msg("w")
	log.Error().Msg("e")
	var got []string
	scanner := bufio.NewScanner(&buf)
	for scanner.Scan() {
		var event struct {
			Level   string `json:"level"`
			Message string `json:"message"`
			Time    string `json:"time"`
		}
		if err := json.Unmarshal(scanner.Bytes(), &event); err != nil {
			t.Fatalf("not a JSON line: %q: %v", scanner.Text(), err)
		}
		if _, err := time.Parse(time.RFC3339, event.Time); err != nil {
			t.Errorf("event without a timestamp: %q", scanner.Text())
		}
		got = append(got, event.Level+":"+event.Message)
	}
	return got
}

func TestLevels(t *testing.T) {
	for level, want := range map[string]string{
		"debug": "debug:d info:i warn:w error:e",
		"info":  "info:i warn:w error:e",
		"warn":  "warn:w error:e",
		"":      "warn:w error:e",
		"error": "error:e",
		"off":   "",
		"DEBUG": "debug:d info:i warn:w error:e",
	} {
		if got := strings.Join(logAll(t, level), " "); got != want {
			t.Errorf("level %q logged %q, want %q", level, got, want)
		}
	}
}

func TestUnknownLevel(t *testing.T) {
	for _, level := range []string{"x", "trace", "warning", " info"} {
		_, err := New(&bytes.Buffer{}, level)
		want := `unknown log level ` + strconv.Quote(level) + ` (want debug, info, warn, error or off)`
		if err == nil || err.Error() != want || !errors.Is(err, ErrUnknownLevel) {
			t.Errorf("New(%q) error = %v, want %s", level, err, want)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for name, want := range map[string]zerolog.Level{
		"debug": zerolog.DebugLevel, "info": zerolog.InfoLevel, "warn": zerolog.WarnLevel,
		"error": zerolog.ErrorLevel, "off": zerolog.Disabled, "": zerolog.WarnLevel,
	} {
		if got, err := ParseLevel(name); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
}

func TestLevelFrom(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	for _, tc := range []struct {
		flag          string
		vars          map[string]string
		level, source string
	}{
		{"debug", map[string]string{"VX_LOG": "error"}, "debug", "flag"},
		{"", map[string]string{"VX_LOG": "error"}, "error", "env"},
		{"", map[string]string{"VX_LOG": ""}, "warn", "default"},
		{"", nil, "warn", "default"},
		{"bogus", nil, "bogus", "flag"}, // checked by New, not here
	} {
		level, source := LevelFrom(tc.flag, env(tc.vars))
		if level != tc.level || source != tc.source {
			t.Errorf("LevelFrom(%q, %v) = %q, %q; want %q, %q", tc.flag, tc.vars, level, source, tc.level, tc.source)
		}
	}
	if level, source := LevelFrom("", nil); level != "warn" || source != "default" {
		t.Errorf("LevelFrom with a nil getenv = %q, %q", level, source)
	}
}

func TestFileIsJSON(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, err := New(f, "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Str("task", "app#build").Msg("started")
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	var event map[string]any
	if err := json.Unmarshal(data, &event); err != nil || event["task"] != "app#build" {
		t.Errorf("log file holds %q (%v)", data, err)
	}
}

func TestNoGlobalChanges(t *testing.T) {
	global, timeFormat := zerolog.GlobalLevel(), zerolog.TimeFieldFormat
	for _, level := range []string{"debug", "off", "error"} {
		if _, err := New(&bytes.Buffer{}, level); err != nil {
			t.Fatal(err)
		}
	}
	if zerolog.GlobalLevel() != global || zerolog.TimeFieldFormat != timeFormat {
		t.Error("New changed zerolog's package-level settings")
	}
}
