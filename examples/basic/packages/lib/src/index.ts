export const greet = (name: string) => `hello ${name}`
