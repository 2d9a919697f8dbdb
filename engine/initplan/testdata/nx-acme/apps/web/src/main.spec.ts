test("web", () => {});
