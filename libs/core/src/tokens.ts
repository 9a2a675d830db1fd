/** Injection tokens for values that are not classes. */
export const APP_CONFIG = Symbol('APP_CONFIG');
export const REDIS = Symbol('REDIS');
export const KEY_ENCRYPTION_KEY = Symbol('KEY_ENCRYPTION_KEY');
export const LOGGER = Symbol('LOGGER');
