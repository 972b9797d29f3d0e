/**
 * Checking of the bundles' raw configuration properties against their typed configuration
 * ({@code @ObjectClassDefinition} annotations), and memory of the last good configuration.
 */
@Export
@Version("1.0.0")
package org.mpiproxy.api.config;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
