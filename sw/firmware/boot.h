#ifndef TSOC_BOOT_H
#define TSOC_BOOT_H
/* Runs a valid server image found in the server window (uploaded by the host
 * with WServer, then the device reset); returns when there is none. */
void boot_uploaded_server(void);
#endif
