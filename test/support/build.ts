/** The build a test's metrics and daemon report: fixed, so outputs compare exactly. */
export const BUILD = { version: '1.2.3', revision: 'abc1234', nodejs: 'v20.20.2' };
