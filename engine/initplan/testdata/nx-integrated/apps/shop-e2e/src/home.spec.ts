test("home", () => {});
