export const Button = 1;
