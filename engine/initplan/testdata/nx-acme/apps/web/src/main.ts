export const web = 1;
