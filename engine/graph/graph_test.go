package graph

import (
	"bytes"
	"encoding/gob"
	"testing"
)

func TestOriginsGobRoundTrip(t *testing.T) {
	var o Origins
	o.Set("command", Origin{File: "packages/app/vx.project.ts", Line: 5, Col: 7})
	o.Set("dependsOn", Origin{File: "vx.workspace.ts", Line: 10, Col: 3})
	o.Set("outputs", Origin{File: "vx.workspace.ts", Line: 9, Col: 5})
	o.Set("exec", Origin{File: "plugin wrap"})
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(Task{ID: "app#build", Origins: o}); err != nil {
		t.Fatal(err)
	}
	var back Task
	if err := gob.NewDecoder(&buf).Decode(&back); err != nil {
		t.Fatal(err)
	}
	if back.Origins != o {
		t.Errorf("origins = %+v, want %+v", back.Origins, o)
	}
	var bad Origins
	if err := bad.GobDecode([]byte{5, 'a'}); err == nil {
		t.Error("truncated origins decoded")
	}
}

// The origins hold one slot per task field.
func TestOriginsHoldEveryField(t *testing.T) {
	if taskFieldCount != len(TaskFields()) {
		t.Fatalf("taskFieldCount %d, TaskFields has %d", taskFieldCount, len(TaskFields()))
	}
	var o Origins
	for i, f := range TaskFields() {
		o.Set(f.Name, Origin{File: f.Name, Line: i + 1})
	}
	data, _ := o.GobEncode()
	var back Origins
	if err := back.GobDecode(data); err != nil || back != o {
		t.Fatalf("origins read back as %+v (%v), want %+v", back, err, o)
	}
}
