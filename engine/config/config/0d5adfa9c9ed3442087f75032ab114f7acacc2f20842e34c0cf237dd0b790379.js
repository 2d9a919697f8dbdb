var __vx = (() => {
  var __defProp = Object.defineProperty;
  var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
  var __getOwnPropNames = Object.getOwnPropertyNames;
  var __hasOwnProp = Object.prototype.hasOwnProperty;
  var __require = /* @__PURE__ */ ((x) => typeof require !== "undefined" ? require : typeof Proxy !== "undefined" ? new Proxy(x, {
    get: (a, b) => (typeof require !== "undefined" ? require : a)[b]
  }) : x)(function(x) {
    if (typeof require !== "undefined") return require.apply(this, arguments);
    throw Error('Dynamic require of "' + x + '" is not supported');
  });
  var __export = (target, all) => {
    for (var name in all)
      __defProp(target, name, { get: all[name], enumerable: true });
  };
  var __copyProps = (to, from, except, desc) => {
    if (from && typeof from === "object" || typeof from === "function") {
      for (let key of __getOwnPropNames(from))
        if (!__hasOwnProp.call(to, key) && key !== except)
          __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
    }
    return to;
  };
  var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

  // vx-projects-entry.ts
  var vx_projects_entry_exports = {};
  __export(vx_projects_entry_exports, {
    modules: () => modules
  });

  // b/vx.project.ts
  var vx_project_exports = {};
  __export(vx_project_exports, {
    default: () => vx_project_default
  });
  var import_config = __require("@vzn/vx/config");
  var shared = { outputs: ["dist/**"] };
  var vx_project_default = (0, import_config.defineProject)({
    name: "a",
    tags: ["x", "y"],
    tasks: {
      build: { ...shared, command: "make", timeout: 1500 },
      test: false
    }
  });

  // vx-projects-entry.ts
  var modules = [vx_project_exports];
  return __toCommonJS(vx_projects_entry_exports);
})();
//# sourceMappingURL=data:application/json;base64,ewogICJ2ZXJzaW9uIjogMywKICAic291cmNlcyI6IFsidngtcHJvamVjdHMtZW50cnkudHMiLCAiYi92eC5wcm9qZWN0LnRzIl0sCiAgIm1hcHBpbmdzIjogIjs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7QUFBQTtBQUFBO0FBQUE7QUFBQTs7O0FDQUE7QUFBQTtBQUFBO0FBQUE7QUFBQSxzQkFBOEI7QUFHOUIsTUFBTSxTQUFTLEVBQUUsU0FBUyxDQUFDLFNBQVMsRUFBRTtBQUN0QyxNQUFPLHlCQUFRLDZCQUFjO0FBQUEsSUFDM0IsTUFBTTtBQUFBLElBQ04sTUFBTSxDQUFDLEtBQUssR0FBRztBQUFBLElBQ2YsT0FBTztBQUFBLE1BQ0wsT0FBTyxFQUFFLEdBQUcsUUFBUSxTQUFTLFFBQVEsU0FBUyxLQUFLO0FBQUEsTUFDbkQsTUFBTTtBQUFBLElBQ1I7QUFBQSxFQUNGLENBQUM7OztBRFZNLE1BQU0sVUFBVSxDQUFDLGtCQUFFOyIsCiAgIm5hbWVzIjogW10KfQo=
