export const config = [];
