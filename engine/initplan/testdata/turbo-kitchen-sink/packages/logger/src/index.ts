export const logger = 1;
