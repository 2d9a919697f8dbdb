export const api = 1;
