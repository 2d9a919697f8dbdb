package workspace

import "github.com/vzn/vx/engine/graph"

// cacheRetention reads the workspace's cacheRetention v: false, or { maxSize, maxAge }; nil for
// null or true (the defaults).
func cacheRetention(r reader, v any) (*graph.CacheRetention, error) {
	if v == nil {
		return nil, nil
	}
	if b, ok := v.(bool); ok {
		if b {
			return nil, nil
		}
		return &graph.CacheRetention{Off: true}, nil
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, r.errAt("cacheRetention", "cacheRetention must be false or { maxSize, maxAge }, not %s", jsType(v))
	}
	m, err := r.object("cacheRetention", v, "maxSize", "maxAge")
	if err != nil {
		return nil, err
	}
	cr := &graph.CacheRetention{}
	if x, ok := m["maxSize"]; ok {
		if cr.MaxSize, err = r.size("cacheRetention.maxSize", x); err != nil {
			return nil, err
		}
	}
	if x, ok := m["maxAge"]; ok {
		if cr.MaxAge, err = r.str("cacheRetention.maxAge", x); err != nil {
			return nil, err
		}
		if cr.Age, err = graph.ParseAge(cr.MaxAge); err != nil || cr.Age <= 0 {
			return nil, r.errAt("cacheRetention.maxAge", "cacheRetention.maxAge %q must be a positive age such as 12h, 7d or 2w", cr.MaxAge)
		}
	}
	return cr, nil
}
