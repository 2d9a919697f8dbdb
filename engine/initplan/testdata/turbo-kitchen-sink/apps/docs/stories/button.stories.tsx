export default { title: "Button" };
